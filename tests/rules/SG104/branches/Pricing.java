import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;

public class Pricing {
    enum Kind { TAG, SQL }

    void start(Kind kind) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("quotes-group");
        switch (kind) {
            case TAG:
                // ok: SG104
                consumer.subscribe("Quotes", "updated");
                break;
            case SQL:
                // ok: SG104
                consumer.subscribe("Quotes", MessageSelector.bySql("price > 10"));
                break;
        }
        consumer.start();
    }
}
