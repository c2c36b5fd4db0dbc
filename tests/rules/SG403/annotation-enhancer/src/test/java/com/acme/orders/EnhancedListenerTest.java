package com.acme.orders;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.annotation.RocketMQMessageListenerBeanPostProcessor;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.junit.Test;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

// This file declares an AnnotationEnhancer: rocketmq-spring applies it to every listener annotation
// before it builds the container, so the blank group written below is not the group the consumer uses.
public class EnhancedListenerTest {

    private final ApplicationContextRunner runner = new ApplicationContextRunner();

    @Test
    public void startsTheListener() {
        runner.withUserConfiguration(EnhancerConfig.class).run(context -> context.getBean(Receiver.class));
    }

    @Configuration
    static class EnhancerConfig {
        @Bean
        public RocketMQMessageListenerBeanPostProcessor.AnnotationEnhancer enhancer() {
            return (attrs, element) -> {
                attrs.put("consumerGroup", "Receiver-Custom-Consumer-Group");
                return attrs;
            };
        }

        @Bean
        public Object receiver() {
            return new Receiver();
        }
    }

    // ok: SG403
    @RocketMQMessageListener(consumerGroup = "", topic = "TopicOrders")
    static class Receiver implements RocketMQListener<String> {
        @Override
        public void onMessage(String message) {
        }
    }
}
